"""One network, every protocol family: the cross-paper comparison of PPNN Lab."""
