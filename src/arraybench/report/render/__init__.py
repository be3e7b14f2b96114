"""The report's renderers: a view-model in, a document out; none reads the store."""
