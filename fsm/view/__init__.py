"""The view layer: what turns Transition records into text and pictures (stream-json events, console lines,
the debugger's ``print`` views, diagrams). Nothing here prints unless handed a stream. A step's one-line
text is :func:`fsm.core.lines.describe`, in core so that session code may use it too."""
