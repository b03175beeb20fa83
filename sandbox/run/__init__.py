"""The run phase: policy, the server container, the attach socket, the egress sink, canaries, the workspace seed and
observation from outside."""
