"""Robot kinematics over batches of configurations."""
