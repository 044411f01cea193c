"""The CORELS Rashomon set: every rule list within a threshold of the certified optimum, listed or counted."""
