"""The view layer: what turns Transition records into text and pictures (events, console lines,
the debugger's descriptions, diagrams). Nothing here prints unless handed a stream."""
