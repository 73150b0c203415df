"""Shape-changing (injective) operators. Being written: see issue 2."""
