"""The view layer: what turns Transition records into text and pictures (stream-json events, console lines,
the debugger's ``print`` views, diagrams) and says what an agent's next step will do (:func:`describe_next`).
Nothing here prints unless handed a stream. A step's one-line text is :func:`fsm.core.lines.describe`, in core
so that session code may use it too."""

from fsm.view.nextstep import describe_next

__all__ = ["describe_next"]
