"""Did performance change? Campaign-to-campaign comparison with statistics
(:mod:`analysis.changes.verdict`), reference gates and a results store with trends."""
