table_average(currency translation adjustments, none)
