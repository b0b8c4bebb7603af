"""nice-attendre: an explicit-state model checker for OpenFlow controller applications."""
