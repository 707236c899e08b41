"""The session layer: the journal's codec, snapshots and restore, the SQLite journal, replay.

Library code: it speaks in parameters and values, never in CLI flags, and never parses arguments.
"""
