"""Which database URLs `shoal import senlin` reads: MySQL/MariaDB through PyMySQL; anything
else is a 422 at `/database` saying why (never a 500, never a connection attempt)."""

from __future__ import annotations

import pytest

from shoal.service.errors import Invalid
from shoal.service.senlin_import import checked_url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("mysql://root@db/senlin", "mysql+pymysql://root@db/senlin"),
        ("mariadb://u:p@db:3307/senlin", "mysql+pymysql://u:p@db:3307/senlin"),
        ("mysql+pymysql://u@db/senlin?charset=utf8", "mysql+pymysql://u@db/senlin?charset=utf8"),
    ],
)
def test_mysql_urls_are_read_through_pymysql(url: str, expected: str) -> None:
    assert checked_url(url) == expected


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("postgresql://db/senlin", "'postgresql' databases are not read"),
        ("sqlite:////tmp/senlin.db", "'sqlite' databases are not read"),
        ("mysql://@/senlin", "must name a host and a database"),
        ("mysql://db", "must name a host and a database"),
        ("mysql://db:abc/senlin", "not a database URL"),
        ("mysql://db:70000/senlin", "not a TCP port"),
        ("senlin", "not a database URL"),
    ],
)
def test_other_urls_are_refused_at_database(url: str, why: str) -> None:
    with pytest.raises(Invalid) as refused:
        checked_url(url)
    (detail,) = refused.value.details
    assert detail["path"] == "/database" and why in detail["message"]
