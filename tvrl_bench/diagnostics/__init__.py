"""What the scripts of diagnostics/ share (they import this package, never a file beside them):

    profile.py    the profile arguments, the built trial and its trainer (no MLflow run), the routers compared
    gradients.py  policy gradients at fixed weights, flattened, steps along them, a batch's pathwise reward
    screens.py    the credit screens' statistics (paired gains, cosines, locality, variance parts)
    noise_arm.py  one arm of the noise screen, trained in a process of its own
"""
