/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Range-checked unsigned module parameters for the BBR variants.
 *
 * RANGED_UINT_PARAM(name, default, min, max, description) declares a module
 * parameter `name` (read as name.val) whose set function rejects anything
 * that is not an integer in [min, max], at load time (insmod/modprobe fail
 * with -EINVAL and the message below in the kernel log) and on writes to
 * /sys/module/<module>/parameters/<name>.
 */
#ifndef BBR_VARIANT_PARAM_H
#define BBR_VARIANT_PARAM_H

#include <linux/kernel.h>
#include <linux/moduleparam.h>

struct ranged_uint {
	unsigned int val, min, max;
};

static int ranged_uint_set(const char *s, const struct kernel_param *kp)
{
	struct ranged_uint *p = kp->arg;
	unsigned int v;

	if (kstrtouint(s, 0, &v) || v < p->min || v > p->max) {
		pr_err("%s: invalid %s=%.*s: must be an integer in [%u, %u]\n",
		       KBUILD_MODNAME, kp->name, (int)strcspn(s, "\n"), s,
		       p->min, p->max);
		return -EINVAL;
	}
	WRITE_ONCE(p->val, v);
	return 0;
}

static int ranged_uint_get(char *buf, const struct kernel_param *kp)
{
	const struct ranged_uint *p = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(p->val));
}

static const struct kernel_param_ops ranged_uint_ops = {
	.set = ranged_uint_set,
	.get = ranged_uint_get,
};

#define RANGED_UINT_PARAM(name, def, lo, hi, desc)			\
	static_assert((unsigned int)(def) - (lo) <= (unsigned int)(hi) - (lo), \
		      #name ": default out of range");			\
	static struct ranged_uint name = { (def), (lo), (hi) };		\
	module_param_cb(name, &ranged_uint_ops, &name, 0644);		\
	MODULE_PARM_DESC(name, desc " (" #lo ".." #hi ", default " #def ")")

#endif /* BBR_VARIANT_PARAM_H */
