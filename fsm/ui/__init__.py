"""The local web view of journalled sessions (``agentfsm ui``): a Starlette app over a read-only journal.

``data`` turns journal records into the JSON the page reads and draws the machine's SVG with classes the page
can highlight; ``server`` is the app and its runner; ``static/`` holds every asset the page loads (HTML, CSS,
vanilla JS: no CDN, no build step). Needs the ``ui`` extra (Starlette, uvicorn, pygraphviz).
"""
