"""Full-rules games on the host (`bloomkeeper simulate`): stalk_full.py and
orchids_full.py play every card and tile of the rulebooks over engine_lite's
table rules, garden.py is the Stalk Exchange garden, fullgame.py what both
share, simulate.py many games with statistics. Not the board simulator
(host/board_sim/)."""
