"""Bloomkeeper host tool (CPython only): the `bloomkeeper` command, serial link host side, plays database, exports."""
