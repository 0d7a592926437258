# Bloomkeeper board entry: main.py on a MicroPython board, code.py on CircuitPython.
# It only starts the app (firmware/main), so a broken app can be fixed from the REPL
# (mpremote: Ctrl-C stops the app) or by re-running `bloomkeeper flash`.
import firmware.main as _app

if hasattr(_app, "main"):
    _app.main()
