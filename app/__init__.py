"""The web app, by job, each folder importing only those below it (import-linter's contract in pyproject.toml):

- site/: the static build, the app written out as files (`python -m app.site build DIR`)
- main.py: builds the app (`uvicorn app.main:app`)
- routes/: the HTTP routes, one module per area
- startup/: what runs before the first request: the bundle check, the prerendered figures, the serve CLI,
  the health document
- service/: the models behind the routes: traces, the choice of model and checkpoint, typed dependencies,
  the documents built from a model, the shipped files and which data sets are usable
- serving/: how bytes leave: security headers, HEAD, compression, once-compressed files, the compact trace
- documents/: the response documents (pydantic) and the article's content
- settings.py: every ANATOMY_* environment variable, read once

figures.py, prerender.py and shipped.py are the commands the README names (`python -m app.figures NAME`, …).
"""
