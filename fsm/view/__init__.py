"""The view layer: what turns Transition records into text and pictures (stream-json events, console lines,
the debugger's ``print`` views, diagrams) and says what an agent's next step will do (:func:`describe_next`).
Nothing here prints unless handed a stream. A step's one-line text is :func:`fsm.core.lines.describe`, in core
so that session code may use it too."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fsm.view.nextstep import describe_next
else:  # each name loads on first use (PEP 562), so a command imports only what it uses
    import lazy_loader

    __getattr__, __dir__, _ = lazy_loader.attach(
        __name__,
        submod_attrs={
            "nextstep": ["describe_next"],
        },
    )

__all__ = ["describe_next"]
