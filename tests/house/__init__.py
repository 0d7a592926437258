"""Checks over the whole repository (import walls, one place, self-contained, docs name real code, the test kit's walls) and the bench's machinery."""
