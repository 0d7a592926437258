"""Sync and the plays database: link.py is the host side of the serial link
(frames through firmware/codec.py), db.py the SQLite plays database, export.py
its JSON/CSV/BG Stats exports."""
