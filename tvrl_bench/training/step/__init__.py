"""One training step: roll out, decode, score, advantages and credit, then the policy-gradient update."""
