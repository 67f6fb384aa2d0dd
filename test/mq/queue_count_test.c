/* SPDX-License-Identifier: MIT */
/* umem_netdev__queue_count() without privileges: lo has one RX queue and no channel query
 * (the rtnetlink fallback), and bad names fail with the documented errno and a message naming
 * the interface. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <umem/port.h>
#include "testutil.h"

static char last_msg[512];

__attribute__((format(printf, 2, 0)))
static int capture(enum umem_print_level level, const char *fmt, va_list args)
{
	(void)level;
	return vsnprintf(last_msg, sizeof(last_msg), fmt, args);
}

int main(void)
{
	char long_name[64];

	umem_set_print(capture);
	CHECK_EQ(umem_netdev__queue_count("lo"), 1);
	CHECK_EQ(umem_netdev__queue_count("mq-no-such-if"), -ENODEV);
	CHECK(strstr(last_msg, "mq-no-such-if") && strstr(last_msg, "no such interface"),
	      "message does not name the interface: %s", last_msg);
	CHECK_EQ(umem_netdev__queue_count(""), -EINVAL);
	CHECK_EQ(umem_netdev__queue_count(NULL), -EINVAL);
	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	CHECK_EQ(umem_netdev__queue_count(long_name), -EINVAL);
	CHECK(strstr(last_msg, long_name), "message does not name '%s': %s", long_name, last_msg);
	return 0;
}
