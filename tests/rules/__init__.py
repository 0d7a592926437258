"""The rules core (engine_lite) and the host's full engines: what each title allows and scores, its game records, in CPython and in MicroPython."""
