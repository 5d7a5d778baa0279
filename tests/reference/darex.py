"""DAREX: the real-valued discrete-time Riccati benchmark examples #1-#15 of
P. Benner, A. J. Laub, V. Mehrmann, "A collection of benchmark examples for
the numerical solution of algebraic Riccati equations II: discrete-time
case", Tech. Report SPC 95_23, TU Chemnitz-Zwickau, 1995, with their default
parameters.

Each case is (A, B, Q, R, S): the DARE
    P = Q + A'PA - (A'PB + S)(R + B'PB)^{-1}(B'PA + S'),
S the cross term (None throughout: #4, the one example of the collection
with a cross term, is taken as SciPy's test suite takes it, without S, so
that R + B'PB is positive definite at the solution and the problem is an LQR
minimisation). SciPy's test suite (scipy/linalg/tests/test_solvers.py,
``test_solve_discrete_are``) lists the same data and was used to check this
transcription. ``EXACT`` holds the closed-form solutions the
collection gives where SciPy's QZ-based solver is known to be inaccurate.
"""
import numpy as np


def _case(A, B, Q, R, S=None):
    f = lambda x: None if x is None else np.ascontiguousarray(np.atleast_2d(np.asarray(x, dtype=float)))
    return f(A), f(B), f(Q), f(R), f(S)


CASES = {
    1: _case([[4, 3], [-4.5, -3.5]], [[1], [-1]], [[9, 6], [6, 4]], [[1]]),
    2: _case([[0.9512, 0], [0, 0.9048]], [[4.877, 4.877], [-1.1895, 3.569]], [[0.005, 0], [0, 0.02]],
             [[1 / 3, 0], [0, 3]]),
    # R = 0: R + B'PB is definite only through P
    3: _case([[2, -1], [1, 0]], [[1], [0]], [[0, 0], [0, 1]], [[0]]),
    # R of rank 1, Q indefinite
    4: _case([[0, 1], [0, -1]], [[1, 0], [2, 1]], np.array([[-4, -4], [-4, 7]]) / 11, [[9, 3], [3, 1]]),
    5: _case([[0, 1], [0, 0]], [[0], [1]], [[1, 2], [2, 4]], [[1]]),
    6: _case([[0.998, 0.067, 0, 0], [-0.067, 0.998, 0, 0], [0, 0, 0.998, 0.153], [0, 0, -0.153, 0.998]],
             [[0.0033, 0.0200], [0.1000, -0.0007], [0.0400, 0.0073], [-0.0028, 0.1000]],
             [[1.87, 0, 0, -0.244], [0, 0.744, 0.205, 0], [0, 0.205, 0.589, 0], [-0.244, 0, 0, 1.048]],
             np.eye(2)),
    7: _case([[0.984750, -0.079903, 0.0009054, -0.0010765],
              [0.041588, 0.998990, -0.0358550, 0.0126840],
              [-0.546620, 0.044916, -0.3299100, 0.1931800],
              [2.662400, -0.100450, -0.9245500, -0.2632500]],
             [[0.0037112, 0.0007361], [-0.0870510, 9.3411e-6], [-1.198440, -4.1378e-4], [-3.192700, 9.2535e-4]],
             np.eye(4) * 1e-2, np.eye(2)),
    8: _case([[-0.6, -2.2, -3.6, -5.400018], [1.0, 0.6, 0.8, 3.399982], [0.0, 1.0, 1.8, 3.799982],
              [0.0, 0.0, 0.0, -0.999982]],
             [[1.0, -1.0, -1.0, -1.0], [0.0, 1.0, -1.0, -1.0], [0.0, 0.0, 1.0, -1.0], [0.0, 0.0, 0.0, 1.0]],
             [[2, 1, 3, 6], [1, 2, 2, 5], [3, 2, 6, 11], [6, 5, 11, 22]], np.eye(4)),
    9: _case(np.array([[95.4070, 1.9643, 0.3597, 0.0673, 0.0190],
                       [40.8490, 41.3170, 16.0840, 4.4679, 1.1971],
                       [12.2170, 26.3260, 36.1490, 15.9300, 12.3830],
                       [4.1118, 12.8580, 27.2090, 21.4420, 40.9760],
                       [0.1305, 0.5808, 1.8750, 3.6162, 94.2800]]) * 0.01,
             np.array([[0.0434, -0.0122], [2.6606, -1.0453], [3.7530, -5.5100], [3.6076, -6.6000],
                       [0.4617, -0.9148]]) * 0.01,
             np.eye(5), np.eye(2)),
    10: _case(np.kron(np.eye(2), np.diag([1, 1], k=1)), np.kron(np.eye(2), [[0], [0], [1]]),
              [[1, 1, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 1, -1, 0],
               [0, 0, 0, -1, 1, 0], [0, 0, 0, 0, 0, 0]],
              [[3, 0], [0, 1]]),
    11: _case(0.001 * np.array([
        [870.1, 135.0, 11.59, 0.5014, -37.22, 0.3484, 0, 4.242, 7.249],
        [76.55, 897.4, 12.72, 0.5504, -40.16, 0.3743, 0, 4.53, 7.499],
        [-127.2, 357.5, 817, 1.455, -102.8, 0.987, 0, 11.85, 18.72],
        [-363.5, 633.9, 74.91, 796.6, -273.5, 2.653, 0, 31.72, 48.82],
        [-960, 1645.9, -128.9, -5.597, 71.42, 7.108, 0, 84.52, 125.9],
        [-664.4, 112.96, -88.89, -3.854, 84.47, 13.6, 0, 144.3, 101.6],
        [-410.2, 693, -54.71, -2.371, 66.49, 12.49, 0.1063, 99.97, 69.67],
        [-179.9, 301.7, -23.93, -1.035, 60.59, 22.16, 0, 213.9, 35.54],
        [-345.1, 580.4, -45.96, -1.989, 105.6, 19.86, 0, 219.1, 215.2]]),
        0.001 * np.array([[4.7600, -0.5701, -83.6800], [0.8790, -4.7730, -2.7300], [1.4820, -13.1200, 8.8760],
                          [3.8920, -35.1300, 24.8000], [10.3400, -92.7500, 66.8000], [7.2030, -61.5900, 38.3400],
                          [4.4540, -36.8300, 20.2900], [1.9710, -15.5400, 6.9370], [3.7730, -30.2800, 14.6900]]),
        np.diag([50, 0, 0, 0, 50, 0, 0, 0, 0]), np.eye(3)),
    # the least accurate one for QZ-based solvers (epsilon = 1e-6)
    12: _case([[0, 1e6], [0, 0]], [[0], [1]], np.eye(2), [[1]]),
    # ill-conditioned (epsilon = 1e6 on Q and R)
    13: _case(np.array([[16, 10, -2], [10, 13, -8], [-2, -8, 7]]) / 9, np.eye(3), 1e6 * np.eye(3), 1e6 * np.eye(3)),
    # an eigenvalue 1 - 1e-8, B = 1e-8: the closed loop crawls
    14: _case([[1 - 1e-8, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]], [[1e-8], [0], [0], [0]],
              np.diag([0.0, 0, 0, 1]), [[0.25]]),
    # n = 100: the shift, driven at its last state
    15: _case(np.eye(100, k=1), np.flipud(np.eye(100, 1)), np.eye(100), [[1]]),
}

#: Ill-conditioned cases, compared at 1e-6 relative instead of 1e-10.
ILL_CONDITIONED = (13, 14)

#: Closed-form solutions of the collection: #12 is diag(1, 1 + eps^-2).
EXACT = {12: np.diag([1.0, 1.0 + 1e12])}


def residual(A, B, Q, R, S, P):
    """Q + A'PA - P - (A'PB + S)(R + B'PB)^{-1}(B'PA + S') (NumPy)."""
    G = B.T @ P @ A + (0 if S is None else S.T)
    return Q + A.T @ P @ A - P - G.T @ np.linalg.solve(R + B.T @ P @ B, G)
