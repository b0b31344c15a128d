import math
print(1e308 * 10 == math.inf, 1e308 * 10, -1e308 * 10)
x = 1e-200 * 1e-200
print(x == 0, x, -1e-200 * 1e-200)
print(str(-0.0), -0.0 + 0.0, -0.0 + -0.0, 0.0 * -1, -5.0 * 0, 0 * -0.5, round(-0.4), round(-0.4, 0), -0.0 == 0.0)
print(0 / -3, 0.0 / -5, -1 / math.inf, 6.0 % -3, -6.0 % 3, 0.0 // -5, -0.0 - 0.0, 0.0 - 0.0, (-0.0) ** 3, (-0.0) ** 2)
print(f"{-0.0:.2f}", f"{-0.0}", f"{-0.0:e}", format(-0.0, 'g'), float('-0.0'), float('-0'), abs(-0.0), -(-0.0), +(-0.0))
print(round(-0.001, 2), round(0.001, 2), int(-0.0), [-0.0], (-0.0,), {'a': -0.0})
print(1e300 * 1e300, 1e300 / 1e-300, 1e308 + 1e308, -1e308 - 1e308)
print(10 ** -400, 2.0 ** -10000, 1 / 10**400)
try:
    print(10**400 / 3)
except OverflowError as e:
    print("OverflowError", e)
try:
    print(float(10**400))
except OverflowError as e:
    print("OverflowError", e)
try:
    print(10**400 * 1.0)
except OverflowError as e:
    print("OverflowError", e)
try:
    print(2.0 ** 10000)
except OverflowError as e:
    print("OverflowError", e)
try:
    print(math.exp(1000))
except OverflowError as e:
    print("OverflowError", e)
print(10**400 / 10**399, 1e308 * 10 - 1e308 * 10)
import statistics
try:
    print(statistics.variance([1e300, -1e300]))
except OverflowError as e:
    print("OverflowError", e)
print(statistics.median([1e308, 1e308]), statistics.mean([1e308, 1e308]), sum([1e308, 1e308]))
print(max(-0.0, 0.0), min(0.0, -0.0), sorted([0.0, -0.0]), -0.0 < 0.0, {0.0: 1}[-0.0])
