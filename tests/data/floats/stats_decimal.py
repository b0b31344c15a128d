# statistics over Decimal data: CPython sums the exact fractions and converts with
# Decimal(numerator) / Decimal(denominator) in the context
import statistics
from decimal import Decimal, getcontext
d = [Decimal('1.5'), Decimal('2.5'), Decimal('4.25')]
print(repr(statistics.mean(d)), repr(statistics.variance(d)), repr(statistics.pvariance(d)))
print(repr(statistics.mean([Decimal('1.5'), 2, 3])), repr(statistics.variance(d, Decimal('2.75'))))
print(repr(statistics.median(d)), repr(statistics.median_low(d)), repr(statistics.mode(d)))
getcontext().prec = 6
print(repr(statistics.mean([Decimal('1'), Decimal('2'), Decimal('2')])), repr(statistics.pvariance(d)))
for data in ([Decimal('1.5'), 2.5], [2.5, Decimal('1.5')]):
    try:
        statistics.mean(data)
    except TypeError as e:
        print("TypeError", e)
