"""One module (or small subpackage) per paper, plus the baselines they compare against."""
