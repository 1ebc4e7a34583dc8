"""Training recipes that build the toy world's pretrained models: the toy policy (flow matching on rendered
scenes) and the learned toy critic. They sit above the world, the components and the trainer."""
