"""`bloomkeeper serve`: the table on a screen (docs/dashboard.md).

A local web page with the live game on the board (fed over the same serial
link and host code as `follow`, recorded into the same plays database as
`sync`) and the plays history with statistics and market charts.

Modules, each small:
  (the CLI entry, argument checks and one-line errors, is host/commands/serve.py)
  server   one asyncio event loop: routes, Server-Sent Events, one-line 4xx replies
  board    the thread that follows the board, records every event, mirrors its ring
  live     the hub that hands the newest snapshot to every open page
  views    the live panel (HTML) from a game state
  history  plays list and per-player statistics (HTML)
  charts   the Stalk Exchange market chart (SVG written from the values)
  store    the ONE place that reads and writes the plays database (pages, one play, the cache)
  pages    the page shell: CSS, the little JavaScript, error text
"""
