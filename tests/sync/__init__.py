"""From the board to the plays database: the link's wire format and faults, sync end to end, the door, peer data, the database and its export."""
