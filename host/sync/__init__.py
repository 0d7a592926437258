"""Sync and the plays database: link.py is the host side of the serial link
(frames through firmware/codec.py), db.py the SQLite plays database, export.py
its JSON/CSV/BG Stats exports, follow.py the game followed as it is played
(`follow`, the dashboard), relay.py the next game's names through the
process that holds the port."""
