"""The only code that talks to a model (DESIGN.md section 2). Import submodules directly."""
