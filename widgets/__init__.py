"""irlab.widgets: the notebook layer (GraphView, PassStepper...). Arrives with the explorer issue."""
