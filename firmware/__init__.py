"""Bloomkeeper board application: hardware layer, buttons, LED ring, UI flow, storage, serial link (device side)."""
