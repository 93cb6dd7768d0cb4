"""TPC-H Q22, Global Sales Opportunity (spec 2.4.22).

One change from the spec's text: `cntrycode` is returned as an INTEGER (the two digits read as a
number) rather than a 2-character string. Result strings come back as positions into a dictionary or a
free-text column, and a substring has neither; the codes are always two digits (10..34), so the
integer order is the string order and every row is the same as the spec's.
"""

from __future__ import annotations

import random

from evaluator.queries.spec import Query

# Country codes are n_nationkey + 10 (spec 4.2.2.9): 10..34.
COUNTRY_CODES = tuple(str(code) for code in range(10, 35))


def random_params(rng: random.Random) -> dict:
    codes = rng.sample(COUNTRY_CODES, 7)
    return {f"code{i}": code for i, code in enumerate(codes, start=1)}


QUERY = Query(
    number=22,
    name="Global Sales Opportunity",
    sql_template="""\
SELECT
    cntrycode,
    count(*) AS numcust,
    sum(c_acctbal) AS totacctbal
FROM (
    SELECT
        CAST(substring(c_phone FROM 1 FOR 2) AS INTEGER) AS cntrycode,
        c_acctbal
    FROM customer
    WHERE substring(c_phone FROM 1 FOR 2)
            IN ('{code1}', '{code2}', '{code3}', '{code4}', '{code5}', '{code6}', '{code7}')
      AND c_acctbal > (
            SELECT avg(c_acctbal)
            FROM customer
            WHERE c_acctbal > 0.00
              AND substring(c_phone FROM 1 FOR 2)
                    IN ('{code1}', '{code2}', '{code3}', '{code4}', '{code5}', '{code6}', '{code7}'))
      AND NOT EXISTS (
            SELECT *
            FROM orders
            WHERE o_custkey = c_custkey)) AS custsale
GROUP BY cntrycode
ORDER BY cntrycode""",
    defaults={
        "code1": "13",
        "code2": "31",
        "code3": "23",
        "code4": "29",
        "code5": "30",
        "code6": "18",
        "code7": "17",
    },
    random_params=random_params,
    order_by=("cntrycode",),
)
