"""The bottom layer of the engine: the sweep's spec (an experiment's settings and points,
frozen), the paper cards its presets come from, the points' spaces, the shapes of the models
it trains, and the trial contract (what the driver hands a trial and what a trial reports).
Every other folder builds on it; it imports none of them (tests/test_code_structure.py)."""
