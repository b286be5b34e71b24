"""What the experiment scripts (`sweeps/<name>.py`) of one paper share, one module per paper
card (`sweeps/papers/<paper>.yaml`): its grids, smoke points and settings; and the smoke
budgets of the tasks several papers' scripts train on (`smoke_tasks`). These modules import
only engine modules, never a script, so each script reads alone and a change to one
script's presets changes no other sweep (tests/test_code_structure.py checks it)."""
