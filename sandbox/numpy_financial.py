# calcroute's numpy_financial for the sandbox: the ten functions of numpy-financial 1.0 in pure
# Python, for hosts where the package is not installed (Debian has no package of it). The
# sandbox runner serves it only when no real numpy_financial is importable. It computes as
# numpy does, in doubles, with numpy's answers where Python would raise: x / 0 is inf or nan,
# a negative base to a fractional power is nan, and a log of a non-positive number is -inf
# or nan. irr isolates the positive roots of its polynomial exactly (fractions: Descartes'
# rule, then a Sturm sequence) and bisects to double precision; rate runs numpy's Newton
# iteration operation for operation to decide, then finds the root it stopped near (numpy's
# own answer stops once a step is below tol, up to ~1e-8 relative away), as the in-process
# evaluator does. Scalars give floats; lists (or arrays) give a list, or a
# numpy array when numpy is importable.
import math
from fractions import Fraction

__all__ = ['fv', 'pmt', 'nper', 'ipmt', 'ppmt', 'pv', 'rate', 'irr', 'npv', 'mirr']

_WHEN = {'end': 0, 'begin': 1, 'e': 0, 'b': 1, 0: 0, 1: 1, 'beginning': 1, 'start': 1,
         'finish': 0}


def _when(when):
    try:
        return _WHEN[when]
    except (KeyError, TypeError):
        return [_WHEN[x] for x in when]


def _seq(x):
    return isinstance(x, (list, tuple)) or (hasattr(x, 'shape') and getattr(x, 'ndim', 0) > 0)


def _out(values):
    try:
        import numpy
        return numpy.asarray(values)
    except ImportError:
        return list(values)


def _vectorize(f, args):
    """f on scalars; over one-dimensional sequences (and scalars beside them) elementwise."""
    if not any(_seq(a) for a in args):
        return f(*args)
    n = max(len(a) for a in args if _seq(a))
    cols = [list(a) if _seq(a) else [a] * n for a in args]
    if any(len(c) != n for c in cols):
        raise ValueError("shape mismatch: objects cannot be broadcast to a single shape")
    return _out([f(*row) for row in zip(*cols)])


def _div(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _pow(a, b):
    try:
        r = a ** b
    except ZeroDivisionError:
        return math.inf
    except OverflowError:
        return math.inf
    return math.nan if isinstance(r, complex) else r


def _log(x):
    if x != x or x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    return math.log(x)


def _fv(rate, nper, pmt, pv, when):
    if rate == 0:
        r = -(pv + pmt * nper)
    else:
        temp = _pow(1 + rate, nper)
        r = -pv * temp - _div(pmt * (1 + rate * when), rate) * (temp - 1)
    if isinstance(rate, int):   # numpy keeps rate's integer dtype
        return int(r) if r == r and abs(r) != math.inf else -2 ** 63
    return float(r)


def fv(rate, nper, pmt, pv, when='end'):
    """Future value: fv + pv*(1+rate)**nper + pmt*(1+rate*when)/rate*((1+rate)**nper-1) == 0."""
    return _vectorize(_fv, (rate, nper, pmt, pv, _when(when)))


def _fact(rate, nper, temp, when):
    return nper if rate == 0 else _div((1 + rate * when) * (temp - 1), rate)


def _pmt(rate, nper, pv, fv, when):
    temp = _pow(1 + rate, nper)
    return float(_div(-(fv + pv * temp), _fact(rate, nper, temp, when)))


def pmt(rate, nper, pv, fv=0, when='end'):
    """The payment against loan principal plus interest."""
    return _vectorize(_pmt, (rate, nper, pv, fv, _when(when)))


def _pv(rate, nper, pmt, fv, when):
    temp = _pow(1 + rate, nper)
    return float(_div(-(fv + pmt * _fact(rate, nper, temp, when)), temp))


def pv(rate, nper, pmt, fv=0, when='end'):
    """The present value."""
    return _vectorize(_pv, (rate, nper, pmt, fv, _when(when)))


def _nper(rate, pmt, pv, fv, when):
    if rate == 0:
        return float(_div(-(fv + pv), pmt))
    z = _div(pmt * (1 + rate * when), rate)
    return float(_div(_log(_div(-fv + z, pv + z)), _log(1 + rate)))


def nper(rate, pmt, pv, fv=0, when='end'):
    """The number of periodic payments."""
    return _vectorize(_nper, (rate, pmt, pv, fv, _when(when)))


def _ipmt(rate, per, nper, pv, fv, when):
    total = _pmt(rate, nper, pv, fv, when)
    r = _fv(rate, per - 1, total, pv, when) * rate
    if isinstance(r, int):   # numpy's nan into rate's integer dtype
        raise ValueError("cannot convert float NaN to integer")
    if per < 1:
        return math.nan
    if when == 1 and per == 1:
        return 0.0
    if when == 1 and per > 1:
        return _div(r, 1 + rate)
    return r


def ipmt(rate, per, nper, pv, fv=0, when='end'):
    """The interest portion of a payment."""
    return _vectorize(_ipmt, (rate, per, nper, pv, fv, _when(when)))


def ppmt(rate, per, nper, pv, fv=0, when='end'):
    """The payment against loan principal."""
    w = _when(when)
    return _vectorize(lambda *a: float(_pmt(a[0], a[2], a[3], a[4], a[5]) - _ipmt(*a)),
                      (rate, per, nper, pv, fv, w))


def _flows(values):
    return [v.item() if hasattr(v, 'item') else v for v in values]


def npv(rate, values):
    """Σ values[t] / (1 + rate)**t, t from 0."""
    total = 0.0
    for t, v in enumerate(_flows(values)):
        total += _div(v, _pow(1 + rate, t))
    return total


def mirr(values, finance_rate, reinvest_rate):
    """The modified internal rate of return."""
    values = _flows(values)
    n = len(values)
    if not (any(v > 0 for v in values) and any(v < 0 for v in values)):
        return math.nan
    numer = abs(npv(reinvest_rate, [v if v > 0 else 0 for v in values]))
    denom = abs(npv(finance_rate, [v if v < 0 else 0 for v in values]))
    return _pow(_div(numer, denom), 1 / (n - 1)) * (1 + reinvest_rate) - 1


def _g_div_gp(r, n, p, x, y, w):
    t1 = _pow(r + 1, n)
    t2 = _pow(r + 1, n - 1)
    g = y + t1 * x + _div(p * (t1 - 1) * (r * w + 1), r)
    gp = (n * t2 * x - _div(p * (t1 - 1) * (r * w + 1), _pow(r, 2)) +
          _div(n * p * t2 * (r * w + 1), r) + _div(p * (t1 - 1) * w, r))
    return _div(g, gp)


def _root(r, n, p, x, y, w):
    """Newton from r on the exact arguments, in 60-digit decimals: the root numpy's
    iteration (which stops once a step is below tol) is near, as a correctly rounded float."""
    import decimal
    with decimal.localcontext(decimal.Context(prec=60)):
        n, p, x, y, r = (decimal.Decimal(float(v)) for v in (n, p, x, y, r))
        for _ in range(12):
            if r == 0 or r <= -1:
                return None
            t1 = (r + 1) ** n
            t2 = (r + 1) ** (n - 1)
            f = r * w + 1
            u = p * (t1 - 1)
            g = y + t1 * x + u * f / r
            gp = n * t2 * x - u * f / (r * r) + n * p * t2 * f / r + u * w / r
            if gp == 0:
                return None
            step = g / gp
            r -= step
            if step == 0 or abs(step) <= abs(r) * decimal.Decimal(10) ** -40:
                return float(r)
    return None


def rate(nper, pmt, pv, fv, when='end', guess=None, tol=None, maxiter=100):
    """The rate of interest per period: numpy-financial's Newton iteration decides (nan when
    it does not converge within maxiter steps); the answer is the root it converged to."""
    w = _when(when)
    rn = 0.1 if guess is None else guess
    tol = 1e-6 if tol is None else tol
    it, close = 0, False
    while it < maxiter and not close:
        nxt = rn - _g_div_gp(rn, nper, pmt, pv, fv, w)
        close = abs(nxt - rn) < tol
        it += 1
        rn = nxt
    if not close:
        return math.nan
    try:
        exact = _root(rn, nper, pmt, pv, fv, w)
    except (ArithmeticError, ValueError):
        exact = None
    return float(rn) if exact is None or exact != exact else exact


def _peval(c, x):
    r = Fraction(0)
    for a in reversed(c):
        r = r * x + a
    return r


def _changes(vals):
    n, last = 0, 0
    for v in vals:
        s = (v > 0) - (v < 0)
        if s and last and s != last:
            n += 1
        if s:
            last = s
    return n


def _sturm(c):
    seq = [c, [i * c[i] for i in range(1, len(c))]]
    while len(seq[-1]) > 1:
        a, b = list(seq[-2]), seq[-1]
        while len(a) >= len(b):
            q = a[-1] / b[-1]
            k = len(a) - len(b)
            for j in range(len(b)):
                a[k + j] -= q * b[j]
            a.pop()
        while a and a[-1] == 0:
            a.pop()
        if not a:
            break
        seq.append([-v for v in a])
    return seq


def irr(values):
    """The rate r closest to 0 with Σ values[t] / (1 + r)**t == 0 (a positive root x of
    Σ values[t] x**t, r = 1/x - 1); nan when there is none. Like numpy, a root where the
    polynomial does not change sign (even multiplicity) is not reported."""
    values = _flows(values)
    if any(v != v or v in (math.inf, -math.inf) for v in values):
        return math.nan
    nz = [i for i, v in enumerate(values) if v != 0]
    if not nz:
        raise IndexError("index 0 is out of bounds for axis 0 with size 0")
    c = [Fraction(v) for v in values[nz[0]:nz[-1] + 1]]
    if len(c) == 1:
        raise ValueError("negative dimensions are not allowed")
    var = _changes(c)
    if var == 0:
        return math.nan
    if _peval(c, Fraction(1)) == 0:
        return 0.0
    bound = 1 + max(abs(a / c[-1]) for a in c[:-1])
    seq = _sturm(c) if var > 1 else None

    def count(a, b):
        return (_changes([_peval(p, a) for p in seq]) - _changes([_peval(p, b) for p in seq])
                if seq else 1)

    todo, best = [(Fraction(0), bound, count(Fraction(0), bound))], None
    while todo:
        a, b, k = todo.pop()
        if k == 0:
            continue
        if k == 1:
            fa, fb = _peval(c, a), _peval(c, b)
            if (fa > 0) == (fb > 0):
                continue
            lo, hi = a, b
            while hi - lo > lo * Fraction(1, 2 ** 64) + Fraction(1, 2 ** 1100):
                mid = (lo + hi) / 2
                fm = _peval(c, mid)
                if fm == 0:
                    lo = hi = mid
                    break
                if (fm > 0) == (fa > 0):
                    lo = mid
                else:
                    hi = mid
            r = 1 / ((lo + hi) / 2) - 1
            if best is None or abs(r) < abs(best):
                best = r
            continue
        for d in range(2, len(c) + 3):
            m = a + (b - a) / d
            if _peval(c, m) != 0:
                break
        kl = count(a, m)
        todo.append((a, m, kl))
        todo.append((m, b, k - kl))
    return math.nan if best is None else float(best)
