"""The smallest game record of each title that still uses every kind of
event it has (docs/game-record.md): tests/rules/test_game_record.py checks the
engine accepts them exactly, and other tests (tests/host/test_doctor.py) use one
as a known-good record.
"""

MINIMAL_STALK = """\
{"ev":"start","game":"stalk-exchange","players":["Ann","Bo"],"length":"long","track_start":20}
{"ev":"plant"}
{"ev":"swap"}
{"ev":"flush"}
{"ev":"harvest","flower":"tulip","count":3}
{"ev":"crash"}
{"ev":"end_turn"}
{"ev":"portfolio","player":"Ann","counts":{"dahlia":2,"daffodil":4,"globemaster":1,"snowdrop":3,"tulip":2}}
{"ev":"portfolio","player":"Bo","counts":{"dahlia":1,"tulip":5,"snowdrop":6}}
"""

MINIMAL_ORCHIDS = """\
{"ev":"start","game":"oh-my-orchids","players":["Lily","Calla","Iris"]}
{"ev":"take","seeds":5}
{"ev":"end_turn"}
{"ev":"take","seeds":3}
{"ev":"end_turn"}
{"ev":"take","seeds":2}
{"ev":"undo"}
{"ev":"take","seeds":1}
{"ev":"end_turn"}
{"ev":"plant","name":"Vanda Miss Joaquim","kind":"orchid","points":10,"seeds":4}
"""
