"""The engine's phases on Ray Tune: one small class per strategy (grid, seed rounds, two-phase
search), the trainable each trial runs, the resources it asks for and its progress lines."""
