"""The models behind the routes: the trace service, the choice of model and checkpoint, typed request dependencies."""
