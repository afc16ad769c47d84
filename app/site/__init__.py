"""The static build: the app written out as a folder any file server serves (`python -m app.site build DIR`)."""
