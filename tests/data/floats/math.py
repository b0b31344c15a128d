# The math functions past math_testcases.txt's, rounded to 12 places (unrounded, an inexact
# in-process value shows the policy's 34 digits, by design), their errors, and -0.0 through them.
import math
def r(x):
    return round(x, 12)
print(f"{math.tan(math.pi / 2):.15e}", r(math.sin(math.pi)), r(math.tau), r(math.e))
print(r(math.asin(0.5)), r(math.acos(0.5)), r(math.acos(0)), r(math.atan2(1, 1)), r(math.atan2(-0.0, -1)), r(math.atan2(0, -1)))
print(r(math.sinh(1)), r(math.cosh(1)), r(math.tanh(0.5)), r(math.asinh(1)), r(math.acosh(2)), r(math.atanh(0.5)))
print(r(math.log1p(0.25)), r(math.expm1(0.25)), math.cbrt(8), r(math.cbrt(2)), math.exp2(10), r(math.exp2(0.5)))
print(math.gamma(5), r(math.gamma(0.5)), r(math.lgamma(10)), math.lgamma(1), r(math.degrees(1)), r(math.radians(180)))
print(math.copysign(1, -0.0), math.copysign(0.0, -1), math.copysign(2.5, 3), math.nextafter(1.0, 2.0), math.ulp(1.0), math.ulp(0.0))
print(math.asin(-0.0), math.sinh(-0.0), math.expm1(-0.0), math.tanh(float('-inf')), math.cosh(float('inf')))
def tryit(f, x):
    try:
        return f(x)
    except ValueError as e:
        return "ValueError " + str(e)
    except OverflowError as e:
        return "OverflowError " + str(e)
print(tryit(math.asin, 2), tryit(math.acosh, 0.5), tryit(math.atanh, 1), tryit(math.log1p, -1))
print(tryit(math.gamma, 0), tryit(math.gamma, -2), tryit(math.lgamma, 0), tryit(math.sinh, 1000))
print(tryit(math.gamma, 200), tryit(math.exp2, 2000), tryit(math.exp, 1000), tryit(math.sqrt, 10**400))
print(tryit(math.gamma, -200.5), r(math.gamma(-1.5)), r(math.lgamma(-0.5)), math.expm1(-1000))
