"""The command line's verbs, at the edge: one thin module per verb (or per stage's verbs).

Each module defines `register(subparsers)`, adding its commands with their flags, help and examples, and the
functions that run them: load the workspace (reporter.config), read the environment and the clock, hand each
stage its own typed settings, and print. reporter/cli.py names the module of each command. Nothing below this
package imports it: the stages never see the command line, the workspace file or the environment.

- `route.py`: `reporter route`, `reporter diagnose`;
- `build.py`: `reporter build` (the pipeline is reporter/build.py); `render.py`: `reporter render`;
- `serve.py`: `reporter serve` (the server is reporter/site/server.py);
- `novelty.py`: `reporter novelty`, `reporter novelty-ingest`;
- `digest.py`: `reporter digest`; `judge.py`: `reporter judge`;
- `screen.py`: `reporter screen`, `reporter export`;
- `fetch.py`: `reporter fetch`; `mail.py`: `reporter mail`; `certify.py`: `reporter certify`;
- `feedback.py`: `reporter feedback` (the reader's marks; reporter/digest/feedback.py and proposals.py).
"""
