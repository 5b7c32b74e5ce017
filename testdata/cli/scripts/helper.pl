helper(from_helper).
