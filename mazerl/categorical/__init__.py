"""The paper's categorical abstraction: closed forms, Monte Carlo and a batched softmax
simulation trained with any registered objective."""
