"""What a sweep records in MLflow: the parent and trial runs, the trained models, and where
the sweep was run from."""
