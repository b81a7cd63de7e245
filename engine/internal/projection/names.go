package projection

// expressionNames are mongod's aggregation expression operators: in a
// projection {a: {<name>: ...}} is parsed as an expression by package expr
// (which answers for operators it lacks), unlike unknown $-names, which
// mongod rejects with 31325. isExpressionName adds expr's own operators.
var expressionNames = map[string]bool{}

func init() {
	for _, n := range []string{
		"$abs", "$acos", "$acosh", "$add", "$allElementsTrue", "$and", "$anyElementTrue",
		"$arrayElemAt", "$arrayToObject", "$asin", "$asinh", "$atan", "$atan2", "$atanh",
		"$avg", "$binarySize", "$bitAnd", "$bitNot", "$bitOr", "$bitXor", "$bsonSize",
		"$ceil", "$cmp", "$concat", "$concatArrays", "$cond", "$convert", "$cos", "$cosh",
		"$dateAdd", "$dateDiff", "$dateFromParts", "$dateFromString", "$dateSubtract",
		"$dateToParts", "$dateToString", "$dateTrunc", "$dayOfMonth", "$dayOfWeek",
		"$dayOfYear", "$degreesToRadians", "$divide", "$eq", "$exp", "$filter", "$first",
		"$firstN", "$floor", "$function", "$getField", "$gt", "$gte", "$hour", "$ifNull",
		"$in", "$indexOfArray", "$indexOfBytes", "$indexOfCP", "$isArray", "$isNumber",
		"$isoDayOfWeek", "$isoWeek", "$isoWeekYear", "$last", "$lastN", "$let", "$literal",
		"$ln", "$log", "$log10", "$lt", "$lte", "$ltrim", "$map", "$max", "$maxN",
		"$median", "$mergeObjects", "$meta", "$millisecond", "$min", "$minN", "$minute",
		"$mod", "$month", "$multiply", "$ne", "$not", "$objectToArray", "$or",
		"$percentile", "$pow", "$radiansToDegrees", "$rand", "$range", "$reduce",
		"$regexFind", "$regexFindAll", "$regexMatch", "$replaceAll", "$replaceOne",
		"$reverseArray", "$round", "$rtrim", "$sampleRate", "$second", "$setDifference",
		"$setEquals", "$setField", "$setIntersection", "$setIsSubset", "$setUnion",
		"$sin", "$sinh", "$size", "$sortArray", "$split", "$sqrt", "$stdDevPop",
		"$stdDevSamp", "$strLenBytes", "$strLenCP", "$strcasecmp", "$substr",
		"$substrBytes", "$substrCP", "$subtract", "$sum", "$switch", "$tan", "$tanh",
		"$toBool", "$toDate", "$toDecimal", "$toDouble", "$toInt", "$toLong", "$toLower",
		"$toObjectId", "$toString", "$toUpper", "$trim", "$trunc", "$tsIncrement",
		"$tsSecond", "$type", "$unsetField", "$week", "$year", "$zip",
	} {
		expressionNames[n] = true
	}
}
