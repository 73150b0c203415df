"""Neural-network operators (``relay.nn``). Being written: see issue 2."""
