// SPDX-License-Identifier: GPL-2.0
/*
 * model.c - freeing the device model and looking things up in it.
 *
 * gd_model_free() must cope with a model the parser abandoned half way:
 * every array element is zeroed when it is added, so a NULL pointer or a
 * zero count simply means "not built yet".
 */
#include <stdlib.h>

#include "model.h"

static void blob_free(struct gd_blob *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
}

static void endpoint_free(struct gd_endpoint *ep)
{
	size_t i;

	blob_free(&ep->extra);
	blob_free(&ep->beh.pattern);
	for (i = 0; i < ep->beh.n_packets; i++)
		blob_free(&ep->beh.packets[i]);
	free(ep->beh.packets);
	free(ep->beh.path);
	free(ep->beh.sizes_path);
}

static void alt_free(struct gd_alt *alt)
{
	size_t i;

	blob_free(&alt->extra);
	for (i = 0; i < alt->n_eps; i++)
		endpoint_free(&alt->eps[i]);
	free(alt->eps);
}

static void config_free(struct gd_config *cfg)
{
	size_t i;

	blob_free(&cfg->extra);
	free(cfg->iads);
	for (i = 0; i < cfg->n_alts; i++)
		alt_free(&cfg->alts[i]);
	free(cfg->alts);
}

void gd_model_free(struct gd_device *dev)
{
	size_t i, j;

	if (!dev)
		return;
	for (i = 0; i < dev->n_configs; i++)
		config_free(&dev->configs[i]);
	free(dev->configs);
	for (i = 0; i < 256; i++) {
		free(dev->strings[i]);
		blob_free(&dev->string_raw[i]);
	}
	for (i = 0; i < dev->n_rules; i++)
		blob_free(&dev->rules[i].data);
	free(dev->rules);
	blob_free(&dev->bos.extra);
	free(dev->name);
	free(dev->path);
	free(dev->function);
	for (i = 0; i < dev->n_function_opts; i++) {
		free(dev->function_opts[i].key);
		free(dev->function_opts[i].value);
		for (j = 0; j < dev->function_opts[i].n_args; j++)
			free(dev->function_opts[i].args[j].text);
		free(dev->function_opts[i].args);
	}
	free(dev->function_opts);
	free(dev);
}

const struct gd_config *gd_config_by_value(const struct gd_device *dev,
					   uint8_t bConfigurationValue)
{
	size_t i;

	for (i = 0; i < dev->n_configs; i++)
		if (dev->configs[i].bConfigurationValue == bConfigurationValue)
			return &dev->configs[i];
	return NULL;
}

const struct gd_alt *gd_alt_find(const struct gd_config *cfg, uint8_t intf,
				 uint8_t alt)
{
	size_t i;

	for (i = 0; i < cfg->n_alts; i++)
		if (cfg->alts[i].bInterfaceNumber == intf &&
		    cfg->alts[i].bAlternateSetting == alt)
			return &cfg->alts[i];
	return NULL;
}

size_t gd_config_num_interfaces(const struct gd_config *cfg)
{
	uint32_t seen[256 / 32] = { 0 };
	size_t i, n = 0;

	for (i = 0; i < cfg->n_alts; i++) {
		uint8_t num = cfg->alts[i].bInterfaceNumber;
		uint32_t bit = 1u << (num % 32);

		if (!(seen[num / 32] & bit)) {
			seen[num / 32] |= bit;
			n++;
		}
	}
	return n;
}
