"""The `bloomkeeper` tool as a user runs it: the command line, config, doctor, the dashboard and the simulators."""
