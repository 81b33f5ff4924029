// SPDX-License-Identifier: GPL-2.0
/*
 * The script of kvm-pvprof's flame graphs (host-kvm/tool/flamegraph.js),
 * copied unchanged into every SVG that 'kvm-pvprof report --flamegraph'
 * writes: the same bytes whatever the profile, so no guest string can
 * ever be part of it.
 *
 * All it knows of the profile it reads from the document.  Each frame is a
 * <g> in #frames, nested as the call tree (a frame's callees are <g>s
 * inside its own), holding a <title> "NAME (N samples, P%)", a <rect>, a
 * <text> label and data-start, the offset of its first sample among all.
 * Names come from the guest: they are read and written as textContent
 * only, and matched against the viewer's own regular expression; nothing
 * in the document is ever parsed as markup or run as code.
 *
 * Zoomed layouts are computed from sample counts, not from the rounded
 * coordinates in the document, so that zooming into a narrow frame does
 * not magnify rounding errors.
 */
(function () {
	"use strict";

	/* flamegraph.pl's metric: a character is 0.59 em of the 12 px font. */
	var CHAR_WIDTH = 7.08;
	var SEARCH_FILL = "rgb(230,0,230)";
	var TITLE_FORMAT = /^([\s\S]*) \((\d+) samples, [0-9.]+%\)$/;

	var frames = [];		/* document order: callers before callees */
	var frameOfGroup = new Map();
	var root = null;
	var pad = 0, fullWidth = 0;
	var searchTerm = null, ignoreCase = false;

	var unzoomButton = document.getElementById("unzoom");
	var searchButton = document.getElementById("search");
	var ignoreCaseButton = document.getElementById("ignorecase");
	var matchedText = document.getElementById("matched");
	var detailsText = document.getElementById("details");
	var frameGroups = document.getElementById("frames");

	function child(element, tag) {
		for (var c = element.firstElementChild; c; c = c.nextElementSibling) {
			if (c.localName === tag)
				return c;
		}
		return null;
	}

	function readFrames() {
		var groups = frameGroups.getElementsByTagName("g");

		for (var i = 0; i < groups.length; i++) {
			var g = groups[i];
			var title = child(g, "title"), rect = child(g, "rect"), text = child(g, "text");
			var parsed = title && TITLE_FORMAT.exec(title.textContent);

			if (!parsed || !rect || !text)
				continue;
			var f = {
				g: g, rect: rect, text: text,
				name: parsed[1],
				samples: Number(parsed[2]),
				start: Number(g.getAttribute("data-start")),
				parent: frameOfGroup.get(g.parentNode) || null,
				x: rect.getAttribute("x"),
				width: rect.getAttribute("width"),
				fill: rect.getAttribute("fill"),
				textX: text.getAttribute("x"),
				label: text.textContent,
				matched: false,
				covered: false,
			};
			frames.push(f);
			frameOfGroup.set(g, f);
		}
		if (frames.length) {
			root = frames[0];
			pad = parseFloat(root.x);
			fullWidth = parseFloat(root.width);
		}
	}

	/* The label flamegraph.pl draws: what fits, its last two characters
	 * ".." when the name is cut; nothing below three characters. */
	function fitLabel(name, width) {
		var chars = Math.floor(width / CHAR_WIDTH);

		if (chars < 3)
			return "";
		if (name.length <= chars)
			return name;
		return name.substring(0, chars - 2) + "..";
	}

	function place(f, x, width) {
		f.rect.setAttribute("x", x.toFixed(1));
		f.rect.setAttribute("width", width.toFixed(1));
		f.text.setAttribute("x", (x + 3).toFixed(1));
		f.text.textContent = fitLabel(f.name, width);
	}

	function frameOf(node) {
		while (node && !frameOfGroup.has(node))
			node = node.parentNode;
		return node ? frameOfGroup.get(node) : null;
	}

	/* Zoom: the frame and its callees across the full width, its callers
	 * greyed at full width, everything else hidden. */
	function zoom(target) {
		if (!target)
			return;
		if (target === root) {
			resetZoom();
			return;
		}
		var scale = fullWidth / target.samples;

		for (var i = 0; i < frames.length; i++) {
			var f = frames[i];
			var inside = target.g.contains(f.g);
			var caller = !inside && f.g.contains(target.g);

			f.g.classList.toggle("hide", !inside && !caller);
			f.g.classList.toggle("parent", caller);
			if (caller)
				place(f, pad, fullWidth);
			else if (inside)
				place(f, pad + (f.start - target.start) * scale, f.samples * scale);
		}
		unzoomButton.classList.remove("hide");
	}

	function resetZoom() {
		for (var i = 0; i < frames.length; i++) {
			var f = frames[i];

			f.g.classList.remove("hide", "parent");
			f.rect.setAttribute("x", f.x);
			f.rect.setAttribute("width", f.width);
			f.text.setAttribute("x", f.textX);
			f.text.textContent = f.label;
		}
		unzoomButton.classList.add("hide");
	}

	/* A regular expression; what is not one is looked for as a substring. */
	function matcher(term) {
		try {
			var re = new RegExp(term, ignoreCase ? "i" : "");

			return function (name) { return re.test(name); };
		} catch (e) {
			var needle = ignoreCase ? term.toLowerCase() : term;

			return function (name) {
				return (ignoreCase ? name.toLowerCase() : name).indexOf(needle) >= 0;
			};
		}
	}

	/*
	 * Highlights the frames whose name matches and shows the share of all
	 * samples that have a matching frame anywhere in their stack.  A frame
	 * below a matching caller adds nothing (its samples are the caller's
	 * already), as in flamegraph.pl; callers come first in frames[].  The
	 * root is no function and never matches.
	 */
	function search(term) {
		if (!root || typeof term !== "string" || term === "") {
			resetSearch();
			return;
		}
		var matches = matcher(term), count = 0;

		for (var i = 0; i < frames.length; i++) {
			var f = frames[i];
			var covered = f.parent !== null && (f.parent.matched || f.parent.covered);

			f.matched = f !== root && matches(f.name);
			f.covered = covered;
			if (f.matched && !covered)
				count += f.samples;
			f.rect.setAttribute("fill", f.matched ? SEARCH_FILL : f.fill);
		}
		searchTerm = term;
		searchButton.classList.add("show");
		searchButton.textContent = "Reset Search";
		matchedText.textContent = "Matched: " + (100 * count / root.samples).toFixed(2) +
			"% (" + count + " of " + root.samples + " samples)";
		matchedText.classList.remove("hide");
	}

	function resetSearch() {
		for (var i = 0; i < frames.length; i++) {
			frames[i].matched = false;
			frames[i].rect.setAttribute("fill", frames[i].fill);
		}
		searchTerm = null;
		searchButton.classList.remove("show");
		searchButton.textContent = "Search";
		matchedText.textContent = " ";
		matchedText.classList.add("hide");
	}

	function searchPrompt() {
		if (searchTerm !== null) {
			resetSearch();
			return;
		}
		var term = window.prompt("Search for frames (a regular expression, e.g. ^ext4_, " +
					 "or else a substring)" +
					 (ignoreCase ? ", ignoring case" : "") +
					 "\nCtrl-I switches case sensitivity", "");
		if (term)
			search(term);
	}

	function toggleIgnoreCase() {
		ignoreCase = !ignoreCase;
		ignoreCaseButton.classList.toggle("show", ignoreCase);
		if (searchTerm !== null)
			search(searchTerm);
	}

	readFrames();

	frameGroups.addEventListener("click", function (e) {
		zoom(frameOf(e.target));
	});
	frameGroups.addEventListener("mouseover", function (e) {
		var f = frameOf(e.target);

		if (f)
			detailsText.textContent = child(f.g, "title").textContent;
	});
	frameGroups.addEventListener("mouseout", function () {
		detailsText.textContent = " ";
	});
	unzoomButton.addEventListener("click", resetZoom);
	searchButton.addEventListener("click", searchPrompt);
	ignoreCaseButton.addEventListener("click", toggleIgnoreCase);
	window.addEventListener("keydown", function (e) {
		if (e.key === "F3" || ((e.ctrlKey || e.metaKey) && e.key === "f")) {
			e.preventDefault();
			searchPrompt();
		} else if (e.ctrlKey && e.key === "i") {
			e.preventDefault();
			toggleIgnoreCase();
		} else if (e.key === "Escape") {
			resetZoom();
		}
	});

	/* For pages that embed the graph, and for the tests. */
	window.pvprofFlamegraph = {
		search: search,
		resetSearch: resetSearch,
		zoom: function (group) { zoom(frameOfGroup.get(group)); },
		resetZoom: resetZoom,
		toggleIgnoreCase: toggleIgnoreCase,
	};
})();
